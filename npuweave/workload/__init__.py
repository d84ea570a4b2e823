"""npuweave.workload"""
