"""npuweave.metrics"""
