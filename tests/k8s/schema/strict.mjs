// Strict validation with the compiled (ajv standalone) validators of kubernetes-models: their own
// errors plus every field their schema does not define.
//
// The compiled validators read every property their schema defines (present or
// not) and iterate the keys of maps (additionalProperties); they never look at other keys. So the
// object is validated through proxies that record what was read, and afterwards every key of an
// object whose schema named properties, that was neither read nor part of an iterated map, is an
// unknown field. An object the validator did not look into at all (a schema-less field, e.g. one
// with x-kubernetes-preserve-unknown-fields) is left alone.

export function tracked(root) {
  const info = new WeakMap();
  const proxies = new WeakMap();
  const wrap = (value) => {
    if (value === null || typeof value !== "object") return value;
    if (proxies.has(value)) return proxies.get(value);
    if (!Array.isArray(value)) info.set(value, { read: new Set(), iterated: false });
    const proxy = new Proxy(value, {
      get(target, key, receiver) {
        if (typeof key === "string" && info.has(target)) info.get(target).read.add(key);
        return wrap(Reflect.get(target, key, receiver));
      },
      has(target, key) {
        if (typeof key === "string" && info.has(target)) info.get(target).read.add(key);
        return Reflect.has(target, key);
      },
      getOwnPropertyDescriptor(target, key) {
        if (typeof key === "string" && info.has(target)) info.get(target).read.add(key);
        return Reflect.getOwnPropertyDescriptor(target, key);
      },
      ownKeys(target) {
        if (info.has(target)) info.get(target).iterated = true;
        return Reflect.ownKeys(target);
      },
    });
    proxies.set(value, proxy);
    return proxy;
  };
  const unknownFields = () => {
    const found = [];
    const walk = (value, path) => {
      if (value === null || typeof value !== "object") return;
      if (Array.isArray(value)) {
        value.forEach((item, i) => walk(item, `${path}/${i}`));
        return;
      }
      const seen = info.get(value);
      if (!seen) return; // never handed to a validator: its parent's schema is free-form
      if (!seen.iterated && seen.read.size === 0) return; // free-form object
      for (const key of Object.keys(value)) {
        const child = `${path}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;
        if (!seen.iterated && !seen.read.has(key)) {
          found.push({ instancePath: child, message: "is not a field of this object's schema" });
        } else {
          walk(value[key], child);
        }
      }
    };
    walk(root, "");
    return found;
  };
  return { proxy: wrap(root), unknownFields };
}

// Runs a compiled validator (ajv's standalone code) strictly: its errors plus the unknown fields.
export function validateStrict(validate, data, basePath = "") {
  const { proxy, unknownFields } = tracked(data);
  const ok = validate(proxy);
  const errors = ok ? [] : (validate.errors || []).map((e) => ({
    instancePath: basePath + e.instancePath,
    message: `${e.message || e.keyword}${e.params && Object.keys(e.params).length ? " " + JSON.stringify(e.params) : ""}`,
  }));
  for (const e of unknownFields()) errors.push({ ...e, instancePath: basePath + e.instancePath });
  return errors;
}

