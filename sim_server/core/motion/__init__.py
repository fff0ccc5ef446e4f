"""Motion helpers the plugins share: velocity, acceleration and jerk limits
(:mod:`.dynamics_limits`), the drives' compiled arithmetic (:mod:`.drive_kernels`) and easing
curves (:mod:`.easing`)."""
