"""placeholder"""
PRESETS = []
