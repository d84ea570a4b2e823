"""npuweave.numbers"""
