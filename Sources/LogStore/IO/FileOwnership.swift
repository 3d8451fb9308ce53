// Who may use a store file (its mode, owner, group and extended attributes),
// carried over to the file a compaction renames over it.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CLogStoreSupport

extension SystemFileSystem {
    /// See ``FileSystem/copyOwnership(from:to:)``.
    func copyOwnership(from original: any FileIO, to file: any FileIO) throws(LogStoreError) {
        guard let source = original as? SystemFile, let target = file as? SystemFile else {
            throw LogStoreError(.io, "\(file.path) cannot take the ownership of \(original.path): one of them is not a file of the system's file system", path: file.path)
        }
        let wanted = try Self.status(of: source), made = try Self.status(of: target)
        // Only what differs changes: a file system without owners or modes
        // (FAT, some network mounts) may refuse even a change to the same.
        // Owner and group first: a change of either may clear the set-ID
        // bits, which the mode then puts back.
        if (wanted.st_uid, wanted.st_gid) != (made.st_uid, made.st_gid) {
            try Self.changeOwner(of: target, to: wanted.st_uid, group: wanted.st_gid)
        }
        if wanted.st_mode & 0o7777 != made.st_mode & 0o7777 {
            guard fchmod(target.descriptor, wanted.st_mode & 0o7777) == 0 else { throw SystemFile.error(errno, "fchmod", path: target.path) }
        }
        try Self.copyExtendedAttributes(from: source, to: target)
        // fdatasync, which saves use, may leave an inode's mode and owner
        // unwritten: these must not be lost before the rename is.
        guard Platform.synchronize(target.descriptor, metadata: true) == 0 else {
            throw SystemFile.error(errno, Platform.synchronizeCallName(metadata: true), path: target.path)
        }
    }

    /// What `fstat` says of `file`.
    private static func status(of file: SystemFile) throws(LogStoreError) -> stat {
        var info = stat()
        guard fstat(file.descriptor, &info) == 0 else { throw SystemFile.error(errno, "fstat", path: file.path) }
        return info
    }

    /// Gives `file` this owner and group, or as much of them as this process
    /// may: only a privileged process gives a file away, but an owner may
    /// give it any group they belong to.
    private static func changeOwner(of file: SystemFile, to owner: uid_t, group: gid_t) throws(LogStoreError) {
        if fchown(file.descriptor, owner, group) == 0 { return }
        guard errno == EPERM else { throw SystemFile.error(errno, "fchown", path: file.path) }
        if fchown(file.descriptor, uid_t.max, group) == 0 { return }   // uid_t.max is (uid_t)-1: keep the owner
        guard errno == EPERM else { throw SystemFile.error(errno, "fchown", path: file.path) }
    }

    /// Copies each extended attribute (user attributes, ACLs, security
    /// labels) this process may read and set; one the file system or the
    /// process's privileges refuse is left out, as it would be by `cp -a`
    /// run by the same user.
    private static func copyExtendedAttributes(from source: SystemFile, to target: SystemFile) throws(LogStoreError) {
        for name in try attributeNames(of: source) {
            guard let value = try attribute(name, of: source) else { continue }
            let result = value.withUnsafeBytes { raw in
                #if canImport(Darwin)
                fsetxattr(target.descriptor, name, raw.baseAddress, raw.count, 0, 0)
                #else
                fsetxattr(target.descriptor, name, raw.baseAddress, raw.count, 0)
                #endif
            }
            if result != 0 && ![EPERM, EACCES, ENOTSUP, EOPNOTSUPP].contains(errno) {
                throw SystemFile.error(errno, "fsetxattr \(name)", path: target.path)
            }
        }
    }

    /// The names of `file`'s extended attributes; none where the file
    /// system has no extended attributes.
    private static func attributeNames(of file: SystemFile) throws(LogStoreError) -> [String] {
        let list = try readGrowing("flistxattr", path: file.path) { buffer, size in
            #if canImport(Darwin)
            flistxattr(file.descriptor, buffer, size, 0)
            #else
            flistxattr(file.descriptor, buffer, size)
            #endif
        }
        guard let list else { return [] }
        return list.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The value of attribute `name`, nil when it went away meanwhile or
    /// this process may not read it.
    private static func attribute(_ name: String, of file: SystemFile) throws(LogStoreError) -> [UInt8]? {
        try readGrowing("fgetxattr \(name)", path: file.path) { buffer, size in
            #if canImport(Darwin)
            fgetxattr(file.descriptor, name, buffer, size, 0, 0)
            #else
            fgetxattr(file.descriptor, name, buffer, size)
            #endif
        }
    }

    /// The bytes `call` returns, asking for their size first and again
    /// whenever they grew in between (ERANGE); nil when the file system or
    /// the process's privileges refuse, or the attribute is gone.
    private static func readGrowing(_ name: String, path: String, _ call: (UnsafeMutablePointer<CChar>?, Int) -> Int) throws(LogStoreError) -> [UInt8]? {
        #if canImport(Darwin)
        let absent = [ENOTSUP, EOPNOTSUPP, EPERM, EACCES, ENOATTR]
        #else
        let absent = [ENOTSUP, EOPNOTSUPP, EPERM, EACCES, ENODATA]
        #endif
        while true {
            let size = call(nil, 0)
            if size < 0 {
                if absent.contains(errno) { return nil }
                throw SystemFile.error(errno, name, path: path)
            }
            var bytes = [UInt8](repeating: 0, count: size)
            let count = bytes.withUnsafeMutableBytes { raw in call(raw.baseAddress?.assumingMemoryBound(to: CChar.self), size) }
            if count >= 0 { return Array(bytes.prefix(count)) }
            if errno == ERANGE { continue }
            if absent.contains(errno) { return nil }
            throw SystemFile.error(errno, name, path: path)
        }
    }
}
