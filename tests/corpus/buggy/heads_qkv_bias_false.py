# part: heads
# hint: heads.layout
# why: self.qkv = nn.Linear(d_model, 3*d_model, bias=False): 192 parameters short at d_model=64

class CausalSelfAttention(CausalSelfAttention):
    def __init__(self, d_model, n_heads):
        super().__init__(d_model, n_heads)
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
