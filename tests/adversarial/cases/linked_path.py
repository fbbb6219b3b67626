# why: the submission PATH given to the grader is itself a symbolic link, to the answer key
# earns: nothing
# path-link: @ROOT@/solutions/attention/attention.ipynb
# problem: symbolic link
