"""Time: sim time in integer nanoseconds (:mod:`.timekeeper`) and the wall-clock pacing and
statistics of a step loop (:mod:`.step_timing`)."""
