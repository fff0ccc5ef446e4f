"""Motion helpers the plugins share: velocity, acceleration and jerk limits
(:mod:`.dynamics_limits`) and easing curves (:mod:`.easing`)."""
