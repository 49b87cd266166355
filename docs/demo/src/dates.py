FORMAT = "%d/%m"
