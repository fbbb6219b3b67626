# part: positions
# hint: positions.cosine
# why: position_similarity divides the dot products by d instead of by the norms, so the diagonal is 1/2

def position_similarity(pe):
    return pe @ pe.T / pe.shape[-1]
