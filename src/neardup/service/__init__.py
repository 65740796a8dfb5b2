"""The HTTP service (:mod:`neardup.service.http_api`), its offline /docs page and the web
pages at ``/`` (:mod:`neardup.service.web`)."""
