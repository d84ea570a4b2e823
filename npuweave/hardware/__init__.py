"""npuweave.hardware"""
