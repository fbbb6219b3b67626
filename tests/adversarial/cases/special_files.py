# why: a folder whose .py files include a FIFO (reading it blocks forever) and a socket, beside honest answers
# earns: base
# run: later
# special: a_fifo.py fifo
# special: b_socket.py socket
# file: c_answers.py
# problem: not a regular file
