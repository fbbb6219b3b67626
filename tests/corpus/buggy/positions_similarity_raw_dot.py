# part: positions
# hint: positions.cosine
# why: position_similarity returns pe @ pe.T without normalising, so the diagonal is d/2

def position_similarity(pe):
    return pe @ pe.T
