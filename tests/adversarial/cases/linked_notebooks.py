# why: attention.ipynb and quiz.ipynb are symbolic links to the answer keys in solutions/
# earns: nothing
# link: attention.ipynb -> @ROOT@/solutions/attention/attention.ipynb
# link: quiz.ipynb -> @ROOT@/solutions/attention/quiz.ipynb
# file: notes.txt
# position: alone
# problem: symbolic link
