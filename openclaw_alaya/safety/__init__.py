"""Text checks with no state and no dependencies: what must not reach a prompt
(`invisible`; `output`, the one sanitiser every surface applies to memory text on its way to a
model) and secrets that a regular expression alone cannot recognise (`secret_shapes`)."""
