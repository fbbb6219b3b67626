# why: an honest submission whose file is named M\xfcller.py, as an LMS download or unzip can leave it: its id must stay one folder inside --out, readable, and never a formula in grades.csv
# earns: base
# file-name: M\xfcller.py
# id: Müller
