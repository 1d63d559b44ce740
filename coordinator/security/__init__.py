"""Security: who a connection is (principal) and what it may do (the authorizer and its ACLs)."""
