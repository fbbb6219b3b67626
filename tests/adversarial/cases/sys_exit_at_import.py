# why: sys.exit at the top of the module: nothing after it is defined
# earns: nothing
# position: top
# feedback: SystemExit
import sys

sys.exit("bye")
