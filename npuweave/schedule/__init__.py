"""npuweave.schedule"""
