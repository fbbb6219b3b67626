# why: its only module is a symbolic link to a file only root may read: a grader that follows it shows the file's lines in the feedback (the SyntaxError quotes them)
# earns: nothing
# link: answers.py -> @SECRETFILE@
# problem: symbolic link
