# Runtime settings a base may carry besides the schedule.
log_level = 'INFO'
load_from = None
resume = False
