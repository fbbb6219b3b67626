import sys

sys.dont_write_bytecode = True  # grading writes nothing but its reports: no __pycache__ next to the package

from .cli import main  # noqa: E402

sys.exit(main())
