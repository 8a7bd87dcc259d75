"""Text checks with no state and no dependencies: what must not reach a prompt
(`invisible`) and secrets that a regular expression alone cannot recognise (`secret_shapes`)."""
