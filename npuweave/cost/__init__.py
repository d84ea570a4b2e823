"""npuweave.cost"""
