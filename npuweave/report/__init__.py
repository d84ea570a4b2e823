"""npuweave.report"""
