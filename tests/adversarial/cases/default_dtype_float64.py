# why: torch.set_default_dtype(torch.float64) at import (its own results change; the grader's must not)
# earns: any
torch.set_default_dtype(torch.float64)
