"""Stateless gRPC service for the Big Two rules engine."""
