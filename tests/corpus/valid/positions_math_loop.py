# part: positions
# why: tutorial style: a Python loop over positions and pairs with math.sin / math.cos (interleaved, exponent i / d_model for even i), returned as a float32 tensor; similarity as a lambda

def sinusoidal_encoding(T, d_model, base=10000.0):
    if d_model % 2 == 1:
        raise ValueError(f"odd d_model={d_model}: sin/cos need pairs of columns")
    rows = []
    for pos in range(T):
        row = []
        for i in range(0, d_model, 2):
            angle = pos / math.pow(base, i / d_model)
            row.append(math.sin(angle))
            row.append(math.cos(angle))
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32).reshape(T, d_model)


position_similarity = lambda pe: (lambda u: u @ u.mT)(  # noqa: E731
    pe / torch.linalg.vector_norm(pe, dim=-1, keepdim=True))
