"""dtrcheck from Python: capture a PyTorch training step as a DTR trace
(dtrcheck.capture, needs only torch) and replay, sweep, map and diagnose traces
with the C++ library (the compiled extension dtrcheck._core). See docs/python.md.
"""
