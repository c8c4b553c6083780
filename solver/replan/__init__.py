"""Re-planning: a plan kept between calls and updated when the cluster changes (`Planner`)."""
