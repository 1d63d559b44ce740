"""The control plane: fault rules, request tracking, a manual clock and the HTTP/JSON control API.

Everything here is optional: with no rule installed, the request path pays one attribute check
(`FaultRules.active`), and nothing imports the HTTP stack unless a control port is configured.
`plane_api.ControlPlane` is the one interface that both the HTTP API and the in-process
`.control` of the embedded server call.
"""
