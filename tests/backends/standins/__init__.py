"""Loopback stand-ins for model providers: small HTTP servers on 127.0.0.1 that validate each request
against the installed SDK's own types and imitate the providers' documented quirks by flags."""
