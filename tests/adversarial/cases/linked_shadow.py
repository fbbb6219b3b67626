# why: its only module is a symbolic link to /etc/shadow: a grader that follows it as root shows the password hashes in the feedback
# earns: nothing
# link: answers.py -> /etc/shadow
# problem: symbolic link
