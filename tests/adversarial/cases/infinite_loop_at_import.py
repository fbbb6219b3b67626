# why: an infinite loop at the top of the module
# earns: nothing
# position: top
# runner: engine
# within: 3
# feedback: did not finish
while True:
    pass
