"""Pages a person reads: compare two texts, search the collection, see its settings.

Served by ``neardup serve`` at ``/`` beside the JSON API, in the same process and behind the
same token (:mod:`neardup.service.web.pages`); templates and static files are the package's own.
"""
