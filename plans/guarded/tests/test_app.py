import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "src"))

from app import address  # noqa: E402


class AddressTest(unittest.TestCase):
    def test_address_uses_the_port(self) -> None:
        self.assertEqual(address("localhost"), "localhost:8080")
