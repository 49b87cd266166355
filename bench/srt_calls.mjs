// srt (Anthropic's sandbox-runtime, what Claude Code sandboxes Bash with) on the same
// commands as bench/sandbox.py, used as a library the way Claude Code uses it: one
// initialize() per session, then wrapWithSandbox() and a spawn per command.
//
// Run by bench/sandbox.py --srt PATH:
//   node bench/srt_calls.mjs PACKAGE_DIR WORKSPACE CALLS
// PACKAGE_DIR is the installed package (node_modules/@anthropic-ai/sandbox-runtime).
// Prints one JSON line: {"bare": [ms...], "srt": [ms...]}, the two interleaved call by
// call (a bare `bash -c COMMAND`, then the same command wrapped by srt).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [packageDir, workspace, count] = process.argv.slice(2);
const entry = path.join(packageDir, 'dist', 'index.js');
const { SandboxManager } = await import(pathToFileURL(entry).href);

await SandboxManager.initialize({
  network: { allowedDomains: [], deniedDomains: [] },
  filesystem: { denyRead: [], allowWrite: [workspace], denyWrite: [] },
});

async function timed(run) {
  const start = process.hrtime.bigint();
  const done = await run();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (done.status !== 0) {
    throw new Error(`exit ${done.status}: ${done.stderr}`);
  }
  return ms;
}

const bare = [];
const srt = [];
try {
  for (let i = 0; i < Number(count); i++) {
    const command = `echo line-${i}`;
    bare.push(await timed(async () => spawnSync('bash', ['-c', command], { cwd: workspace })));
    srt.push(
      await timed(async () => {
        // wrapped per call, as Claude Code does: part of what a call costs
        const wrapped = await SandboxManager.wrapWithSandbox(command);
        return spawnSync(wrapped, { shell: true, cwd: workspace });
      }),
    );
  }
} finally {
  await SandboxManager.reset();
}
process.stdout.write(JSON.stringify({ bare, srt }) + '\n');
