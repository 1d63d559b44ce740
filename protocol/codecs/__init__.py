"""Generated codec modules (protocol/codegen_module.py): one per hot API, every version's decoder
and encoder of its request and response as plain functions, with version -> function tables
(DECODE_REQUEST, ENCODE_REQUEST, DECODE_RESPONSE, ENCODE_RESPONSE). protocol/codec.py runs them,
or their mypyc-compiled copies when built (protocol/native.py). Do not edit them by hand."""
