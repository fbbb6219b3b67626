# why: an honest submission whose file is named =1+2.py, as an LMS download or unzip can leave it: its id must stay one folder inside --out, readable, and never a formula in grades.csv
# earns: base
# file-name: =1+2.py
# id: '=1+2
