"""npuweave.compile"""
