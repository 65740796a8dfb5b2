"""The service's API docs page at ``/docs``, working offline: Swagger UI from the
``swagger-ui-bundle`` package (in the ``serve`` extra), served by the service itself.

FastAPI's own ``/docs`` loads Swagger UI from a CDN, so it is blank without internet access.
"""

from __future__ import annotations

from typing import Any

from neardup.util import extras

__all__ = ["ASSETS_PATH", "add_docs"]

ASSETS_PATH = "/docs-assets"  # Swagger UI's scripts and styles: public, open without a token


def add_docs(app: Any) -> None:
    """Serve ``/docs`` (Swagger UI over ``app.openapi_url``) with its assets under
    :data:`ASSETS_PATH`; ``app`` was made with ``docs_url=None, redoc_url=None``."""
    bundle = extras.swagger_ui("the API docs page (/docs)")
    from fastapi.openapi.docs import get_swagger_ui_html
    from fastapi.responses import HTMLResponse
    from fastapi.staticfiles import StaticFiles

    app.mount(ASSETS_PATH, StaticFiles(directory=bundle.swagger_ui_path), name="docs-assets")

    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url,
            title=f"{app.title} — API",
            swagger_js_url=f"{ASSETS_PATH}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_PATH}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS_PATH}/favicon-32x32.png",
        )

    app.get("/docs", include_in_schema=False)(docs)
