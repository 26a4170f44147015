# The driver: main() of generated executables, linked after their object.
