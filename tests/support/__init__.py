"""What several test directories share: fixtures (the modules tests/conftest.py registers as
plugins, so every test can take them by name) and the plain helpers beside them (imported as
any module is). A test module imports from here, never from another test module or a conftest
of another directory."""
