# why: padding_mask raises an exception whose __str__ itself raises, and apply_mask one whose __str__ returns a non-string
# earns: zero-on padding_mask, apply_mask
# feedback: raised Unprintable


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no message for you")


class NotAString(Exception):
    def __str__(self):
        return 42


def padding_mask(lengths, T):
    raise Unprintable()


def apply_mask(scores, mask):
    raise NotAString()
