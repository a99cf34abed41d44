import pathlib
import sys

# Lets tests import the shared builders as a plain module.
sys.path.insert(0, str(pathlib.Path(__file__).parent))
