import CabinetStorage

/// Where a Redis store is: the server, the database number, the credentials,
/// and the store's name. Its ``description`` never shows the password.
///
/// ```swift
/// let address = try RedisAddress(url: "redis://:secret@127.0.0.1:6379/0/music")
/// print(address)           // redis://127.0.0.1:6379/0/music
/// ```
public struct RedisAddress: Sendable, Equatable, CustomStringConvertible {
    /// The server's host name or address.
    public var host: String
    /// The server's port.
    public var port: Int
    /// The database number (`SELECT`); Redis Cluster has only database 0.
    public var database: Int
    /// The ACL user name for `AUTH`, or `nil` for the default user.
    public var username: String?
    /// The password for `AUTH`, or `nil` for a server without `requirepass`. Never printed.
    public var password: String?
    /// The store's name: every key of the store carries it as a hash tag (`{music}:Song`).
    public var store: String

    /// An address from its parts; `store` is checked (see ``checkStoreName(_:)``).
    public init(host: String, port: Int = 6379, database: Int = 0, username: String? = nil,
                password: String? = nil, store: String) throws {
        guard (1...65535).contains(port) else {
            throw CabinetError.notAStore(path: "redis://\(host):\(port)", reason: "the port must be 1 to 65535")
        }
        guard database >= 0 else {
            throw CabinetError.notAStore(path: "redis://\(host):\(port)/\(database)", reason: "the database number must be 0 or more")
        }
        try RedisAddress.checkStoreName(store)
        (self.host, self.port, self.database, self.username, self.password, self.store) = (host, port, database, username, password, store)
    }

    /// Parses `redis://[[user]:password@]host[:port][/database][/store]`; a
    /// store in the URL wins over `store`, one of the two must be there.
    ///
    /// ```swift
    /// let a = try RedisAddress(url: "redis://127.0.0.1:6379/0", store: "music")
    /// let b = try RedisAddress(url: "redis://:secret@10.0.0.5/2/notes")
    /// ```
    public init(url: String, store: String? = nil) throws {
        let shown = RedisAddress.redacted(url)
        func bad(_ reason: String) -> CabinetError {
            CabinetError.notAStore(path: shown, reason: reason + "; write it as redis://[:password@]host[:port][/database][/store]")
        }
        guard url.hasPrefix("redis://") else { throw bad("a Redis store's URL starts with redis://") }
        var rest = Substring(url.dropFirst("redis://".count))
        var username: String?, password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                let user = String(credentials[..<colon])
                username = user.isEmpty ? nil : try RedisAddress.percentDecoded(user, bad)
                password = try RedisAddress.percentDecoded(String(credentials[credentials.index(after: colon)...]), bad)
            } else {
                password = try RedisAddress.percentDecoded(String(credentials), bad)
            }
        }
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        let hostPort = parts[0]
        guard !hostPort.isEmpty else { throw bad("it names no host") }
        var host = String(hostPort), port = 6379
        if hostPort.hasPrefix("[") {
            // An IPv6 address in brackets, as in redis://[::1]:6379.
            guard let close = hostPort.firstIndex(of: "]") else { throw bad("an IPv6 address lacks its ]") }
            host = String(hostPort[hostPort.index(after: hostPort.startIndex)..<close])
            let after = hostPort[hostPort.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":", let number = Int(after.dropFirst()) else { throw bad("the port is not a number") }
                port = number
            }
        } else if let colon = hostPort.lastIndex(of: ":") {
            host = String(hostPort[..<colon])
            guard let number = Int(hostPort[hostPort.index(after: colon)...]) else { throw bad("the port is not a number") }
            port = number
        }
        var database = 0
        if parts.count > 1, !parts[1].isEmpty {
            guard let number = Int(parts[1]) else { throw bad("the database '\(parts[1])' is not a number") }
            database = number
        }
        guard parts.count <= 3 else { throw bad("too many path components") }
        let named = parts.count == 3 && !parts[2].isEmpty ? String(parts[2]) : store
        guard let named else { throw bad("it names no store (add /database/store, or pass store:)") }
        try self.init(host: host, port: port, database: database, username: username, password: password, store: named)
    }

    /// `redis://host:port/database/store`, without credentials: for messages and logs.
    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "redis://\(shownHost):\(port)/\(database)/\(store)"
    }

    /// Whether `text` looks like a Redis store's URL, for tools that take a path or a URL.
    public static func isURL(_ text: String) -> Bool { text.hasPrefix("redis://") }

    /// A store name is 1 to 128 letters, digits, `.`, `_` or `-`: it goes into
    /// every key between `{` and `}` (the cluster hash tag), and into `SCAN`
    /// patterns, where braces, `/`, `*` or `?` would change what it means.
    public static func checkStoreName(_ name: String) throws {
        let allowed = name.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard (1...128).contains(name.utf8.count), allowed else {
            throw CabinetError.notAStore(path: name, reason: "a Redis store's name is 1 to 128 letters, digits, '.', '_' or '-'")
        }
    }

    /// `url` with any password replaced by `***`, for messages about a URL that did not parse.
    static func redacted(_ url: String) -> String {
        guard url.hasPrefix("redis://"), let at = url.lastIndex(of: "@") else { return url }
        let start = url.index(url.startIndex, offsetBy: "redis://".count)
        let credentials = url[start..<at]
        let user = credentials.firstIndex(of: ":").map { String(credentials[..<$0]) + ":" } ?? ""
        return "redis://" + user + "***" + url[at...]
    }

    private static func percentDecoded(_ text: String, _ bad: (String) -> CabinetError) throws -> String {
        guard text.contains("%") else { return text }
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let first = utf8.index(after: index)
                guard first != utf8.endIndex, utf8.index(after: first) != utf8.endIndex,
                      let value = UInt8(String(decoding: utf8[first...utf8.index(after: first)], as: UTF8.self), radix: 16) else {
                    throw bad("a credential has a bad %-escape")
                }
                bytes.append(value)
                index = utf8.index(first, offsetBy: 2)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension RedisAddress: CustomReflectable {
    /// What `dump` and debuggers show: the parts, the password as `***`.
    public var customMirror: Mirror {
        Mirror(self, children: ["host": host, "port": port, "database": database, "username": username as Any,
                                "password": password == nil ? "nil" : "***", "store": store])
    }
}
