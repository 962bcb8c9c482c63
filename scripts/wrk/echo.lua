-- wrk script: POST a ~1 KiB JSON document to /echo on every request (a
-- route file's JSON echo: docs/routes.md). The body is pretty-printed, so
-- the server has whitespace to take out: 1145 bytes in, 756 out.
wrk.method = "POST"
wrk.path = "/echo"
wrk.headers["Content-Type"] = "application/json"
wrk.body = [[
{
 "request_id": "5f0c2a9e-1b7d-4c3e-9a61-0d8e2f4b7c15",
 "user": {
  "id": 48213,
  "name": "Ada Lovelace",
  "email": "ada@example.org",
  "roles": [
   "admin",
   "analyst"
  ],
  "active": true
 },
 "items": [
  {
   "sku": "SKU-0000",
   "qty": 1,
   "price": 0.99,
   "tags": [
    "green"
   ]
  },
  {
   "sku": "SKU-0001",
   "qty": 2,
   "price": 4.24,
   "tags": [
    "red",
    "blue"
   ]
  },
  {
   "sku": "SKU-0002",
   "qty": 3,
   "price": 7.49,
   "tags": [
    "green"
   ]
  },
  {
   "sku": "SKU-0003",
   "qty": 4,
   "price": 10.74,
   "tags": [
    "red",
    "blue"
   ]
  },
  {
   "sku": "SKU-0004",
   "qty": 5,
   "price": 13.99,
   "tags": [
    "green"
   ]
  },
  {
   "sku": "SKU-0005",
   "qty": 1,
   "price": 17.24,
   "tags": [
    "red",
    "blue"
   ]
  },
  {
   "sku": "SKU-0006",
   "qty": 2,
   "price": 20.49,
   "tags": [
    "green"
   ]
  },
  {
   "sku": "SKU-0007",
   "qty": 3,
   "price": 23.74,
   "tags": [
    "red",
    "blue"
   ]
  },
  {
   "sku": "SKU-0008",
   "qty": 4,
   "price": 26.99,
   "tags": [
    "green"
   ]
  }
 ],
 "total": 187.43,
 "currency": "EUR",
 "note": null
}]]
