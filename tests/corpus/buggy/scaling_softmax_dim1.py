# part: scaling
# hint: scaling.dim
# why: softmax over dim=1, the head axis of (B, H, T_q, T_k) scores (and the query axis of 3-D scores)

def attention_weights(scores, mask=None):
    if mask is not None:
        scores = apply_mask(scores, mask)
    return F.softmax(scores, dim=1)
