/// Where in a store something happened: the file, the stored class and the row.
///
/// Every ``CabinetError`` that concerns stored data carries one, so a message
/// can say exactly which record of which file is involved.
public struct RecordLocation: Hashable, Sendable, CustomStringConvertible {
    /// The path of the database file (or the in-memory table's name).
    public var file: String
    /// The class whose table it is (the table's name, which the object layer calls a
    /// stored class name), or `nil` for a table that holds no class (the named buffers).
    public var className: String?
    /// The row ID, or `nil` when the problem concerns the whole file.
    public var rowID: UInt32?

    public init(file: String, className: String? = nil, rowID: UInt32? = nil) {
        self.file = file
        self.className = className
        self.rowID = rowID
    }

    public var description: String {
        var text = "'\(file)'"
        if let className { text += ", class \(className)" }
        if let rowID { text += ", row \(rowID)" }
        return text
    }
}

/// The one error type Cabinet throws.
///
/// Match its ``code`` to react; print it (``description``) to tell a person what
/// happened, where (file, class, row) and what to do:
/// ```swift
/// do {
///     let store = try ObjectStore(path: "/tmp/music")
/// } catch let error as CabinetError where error.code == .storeLocked {
///     print("\(error.path ?? "?") is in use by process \(error.pid.map(String.init) ?? "?")")
/// } catch CabinetError.Code.notADirectory {
///     print("pass the path of a directory")
/// } catch {
///     print(error)
/// }
/// ```
/// Codes can be added in any release, so a `switch` over ``code`` needs a
/// `default:`. The values an error carries are optional properties, set for the
/// codes that have them (each code's documentation says which): ``location``
/// for errors about stored data, ``path`` for errors about the whole store,
/// ``underlying`` for what Tokyo Cabinet or the operating system said.
/// Two errors are equal when all their parts are.
public struct CabinetError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of error this is: match it, as in `error.code == .missingRecord`.
    public let code: Code
    /// The file, class and row involved, when the error concerns stored data
    /// (a record, a class file, the journal).
    ///
    /// ```swift
    /// if let row = error.location?.rowID { print("row \(row) is damaged") }
    /// ```
    public let location: RecordLocation?
    /// The store directory, when the error concerns the whole store
    /// (``Code/storeLocked``, ``Code/notAStore``, ``Code/storeClosed``, …).
    public let path: String?
    /// What Tokyo Cabinet or the operating system reported, for
    /// ``Code/backendFailure`` and ``Code/systemCallFailure``.
    ///
    /// ```swift
    /// if error.underlying?.domain == .posix, error.underlying?.code == ENOSPC { print("the disk is full") }
    /// ```
    public let underlying: Underlying?
    /// The operation that failed (`"open"`, `"write"`, `"rename … to"`), for
    /// ``Code/backendFailure`` and ``Code/systemCallFailure``.
    public let operation: String?
    /// Why, in words, for the codes that say: what is malformed, why a store
    /// cannot be opened, what is in the way.
    public let reason: String?
    /// The process holding the store's lock, when ``Code/storeLocked`` could tell.
    public let pid: Int32?
    /// The class ID of ``Code/unknownClassID``, or the one the catalog lists for
    /// ``Code/missingClassFile`` (if it lists one).
    public let classID: UInt8?
    /// The class version that wrote the record, for ``Code/newerVersion``; the
    /// version whose layout changed, for ``Code/layoutChanged``.
    public let recordVersion: UInt8?
    /// The class version this program declares, for ``Code/newerVersion``.
    public let classVersion: UInt8?
    /// The size of the value refused by ``Code/valueTooLarge``, in bytes.
    public let size: Int?
    /// The most a record can hold (``Code/valueTooLarge``, in bytes), or how
    /// many classes a store can have (``Code/tooManyClasses``).
    public let limit: Int?
    /// Where in the record the read began, for ``Code/truncatedRecord``.
    public let offset: Int?
    /// How many bytes the read asked for, for ``Code/truncatedRecord``.
    public let needed: Int?
    /// How many bytes were left, for ``Code/truncatedRecord``.
    public let available: Int?
    /// The Swift class involved, for errors about registering or upgrading a class
    /// (``Code/classNotRegistered``, ``Code/classConflict``, ``Code/tooManyClasses``,
    /// ``Code/unsavedChanges``, ``Code/invalidStoredName``).
    public let className: String?
    /// The class of the object that was never inserted, for ``Code/referenceToUninsertedObject``.
    public let targetClass: String?
    /// The name refused: a named-buffer name (``Code/invalidName``) or a class's
    /// stored name (``Code/invalidStoredName``).
    public let name: String?

    /// An error of kind `code`; the factories (``storeLocked(path:pid:)``,
    /// ``malformedRecord(_:reason:)``, …) say which parts each code has.
    init(_ code: Code, location: RecordLocation? = nil, path: String? = nil, underlying: Underlying? = nil,
         operation: String? = nil, reason: String? = nil, pid: Int32? = nil, classID: UInt8? = nil,
         recordVersion: UInt8? = nil, classVersion: UInt8? = nil, size: Int? = nil, limit: Int? = nil,
         offset: Int? = nil, needed: Int? = nil, available: Int? = nil,
         className: String? = nil, targetClass: String? = nil, name: String? = nil) {
        self.code = code
        self.location = location
        self.path = path
        self.underlying = underlying
        self.operation = operation
        self.reason = reason
        self.pid = pid
        self.classID = classID
        self.recordVersion = recordVersion
        self.classVersion = classVersion
        self.size = size
        self.limit = limit
        self.offset = offset
        self.needed = needed
        self.available = available
        self.className = className
        self.targetClass = targetClass
        self.name = name
    }

    /// The same error with `reason` in place of its own: for a layer that
    /// knows more about why it happened than the one that threw it.
    package func replacingReason(with reason: String) -> CabinetError {
        CabinetError(code, location: location, path: path, underlying: underlying, operation: operation, reason: reason,
                     pid: pid, classID: classID, recordVersion: recordVersion, classVersion: classVersion, size: size,
                     limit: limit, offset: offset, needed: needed, available: available, className: className,
                     targetClass: targetClass, name: name)
    }
}

extension CabinetError {
    /// What a failed call below Cabinet reported: Tokyo Cabinet's error code
    /// (`tchdbecode`) or the operating system's `errno`, kept apart by ``domain``,
    /// with the message that goes with it.
    ///
    /// ```swift
    /// switch error.underlying?.domain {
    /// case .posix?: print("the system said: \(error.underlying!.message)")
    /// case .tokyoCabinet?: print("Tokyo Cabinet error \(error.underlying!.code)")
    /// default: break
    /// }
    /// ```
    /// Like ``Code``, ``Domain`` is a struct that can grow (a future backend may
    /// bring its own domain), so a `switch` over it needs a `default:`.
    public struct Underlying: Sendable, Equatable, CustomStringConvertible {
        /// Whose error code ``code`` is.
        public struct Domain: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
            /// Tokyo Cabinet: ``Underlying/code`` is a `TCE…` code, as `tchdbecode` returns it.
            public static let tokyoCabinet = Domain(rawValue: "tokyoCabinet")
            /// The operating system: ``Underlying/code`` is an `errno` value (`ENOSPC`, `EACCES`, …).
            public static let posix = Domain(rawValue: "posix")
            /// Redis (the `CabinetRedis` backend): ``Underlying/code`` is hiredis's error
            /// code for a failed connection (`REDIS_ERR_IO`, `REDIS_ERR_EOF`, …), or 0 for
            /// an error reply of the server, whose first word (`OOM`, `NOAUTH`) leads the message.
            public static let redis = Domain(rawValue: "redis")

            /// The domain's name, as in `"posix"`.
            public let rawValue: String
            /// A domain by name; Cabinet's own are ``tokyoCabinet`` and ``posix``.
            public init(rawValue: String) { self.rawValue = rawValue }
            public var description: String { rawValue }
        }

        /// Whose code ``code`` is.
        public let domain: Domain
        /// The error code, in ``domain``'s numbering.
        public let code: Int32
        /// What the code means, in words (`tchdberrmsg`, `strerror`, or Cabinet's
        /// explanation where it knows better, such as a symbolic link it refuses to follow).
        public let message: String

        /// An underlying error of any domain.
        public init(domain: Domain, code: Int32, message: String) {
            self.domain = domain
            self.code = code
            self.message = message
        }

        /// Tokyo Cabinet's error `code` (`tchdbecode`) and its message (`tchdberrmsg`).
        ///
        /// ```swift
        /// let underlying = CabinetError.Underlying.tokyoCabinet(code: 6, message: "invalid meta data")
        /// ```
        public static func tokyoCabinet(code: Int32, message: String) -> Underlying {
            Underlying(domain: .tokyoCabinet, code: code, message: message)
        }

        /// The operating system's `errno` and what it means.
        ///
        /// ```swift
        /// let underlying = CabinetError.Underlying.posix(errno: ENOSPC, message: "No space left on device")
        /// ```
        public static func posix(errno: Int32, message: String) -> Underlying {
            Underlying(domain: .posix, code: errno, message: message)
        }

        /// The message and the code, as in `No space left on device (errno 28)`.
        public var description: String {
            switch domain {
            case .tokyoCabinet: "\(message) (error code \(code))"
            case .posix: "\(message) (errno \(code))"
            case .redis: code == 0 ? "Redis said: \(message)" : "\(message) (hiredis error \(code))"
            default: "\(message) (\(domain) error code \(code))"
            }
        }
    }
}
