# why: a folder of symbolic links to the reference (masks.py, scaling.py, and the whole package folder), plus a file of its own that does nothing
# earns: nothing
# link: a_masks.py -> @INSTALL@/attention_ref/masks.py
# link: b_scaling.py -> @INSTALL@/attention_ref/scaling.py
# link: reference -> @INSTALL@/attention_ref
# file: notes.py
# position: alone
# problem: symbolic link
