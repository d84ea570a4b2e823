"""npuweave.sim"""
